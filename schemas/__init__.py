"""The ground floor: what every layer shares, importing nothing else of the project.

The folder is named for its largest part, the table schemas, but it holds four kinds of shared
piece, and only the last is a schema:

- typed errors (`errors`): every expected failure, turned into one CLI line at the edge;
  `SettingError` names a setting by its quantity, and each interface re-spells it (flags).
- the records every layer passes on (`records`): `Offer`, `InterruptionRate`, `Rejected`, `Page`,
  what parsers yield and loads take.
- helpers without a table: `units` (the convention GB = 10^9 bytes, USD, seconds, and its
  conversions), `redact` (scrubbing secrets from what is stored, logged or printed) and
  `reference` (loaders for the reference CSVs in `schemas/reference/`).
- table schemas: one pandera model per table (`offers.OfferRow`, `interruption_rates`,
  `gpu_models`, the terms tables with the provenance they share in `evidence` and `sourced`,
  ...) and `validate`, the one validation step every batch goes through.

Keep this file free of imports: read paths import single modules from here, cheaply.
"""
