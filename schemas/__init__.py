"""The ground floor: what every layer shares, importing nothing else of the project.

- `errors`: typed errors, turned into one CLI line at the edge.
- `records`: `Offer`, `InterruptionRate`, `Rejected`, `Page`: what parsers yield and loads take.
- `units`, `redact`: the unit convention (GB = 10^9 bytes, USD, seconds) and secret scrubbing.
- `reference`: loaders for the reference CSVs in `schemas/reference/`.
- one pandera model per table (`offers`, `interruption_rates`, `gpu_models`, ...) and
  `validate`, the one validation step every batch goes through.

Keep this file free of imports: read paths import single modules from here, cheaply.
"""
