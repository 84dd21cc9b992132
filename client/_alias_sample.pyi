# Type stub of the optional C accelerator client/_alias_sample.c.
from typing import Any

def alias_sample(table: Any, xs: Any, words: Any, out: Any, bits: int, alias_bits: int, shift: int) -> int: ...
