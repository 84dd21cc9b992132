"""rldp: robust local differential privacy.

Subpackages: ``rldp.shared`` (math and the mechanism document, numpy only),
``rldp.client`` (the SDK), ``rldp.aggregator`` (design, estimation, service, CLI),
``rldp.demo`` (simulation and experiments).
"""

from importlib.metadata import PackageNotFoundError, version

try:  # one source: pyproject.toml's [project] version, as installed
    __version__ = version("rldp")
except PackageNotFoundError:  # a source tree that was never installed (pip install -e .)
    __version__ = "0+unknown"

__all__ = ["__version__"]
