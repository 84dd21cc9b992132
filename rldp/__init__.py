"""rldp: robust local differential privacy.

Subpackages: ``rldp.shared`` (math and the mechanism document, numpy only),
``rldp.client`` (the SDK), ``rldp.aggregator`` (design, estimation, service, CLI),
``rldp.demo`` (simulation and experiments).
"""

__version__ = "0.1.0"
