from __future__ import annotations

import polars as pl
import pytest

from gpucat.schemas import egress_terms, providers, storage_terms

MODELS = {"providers": providers.ProviderTerms, "storage_terms": storage_terms.StorageTerms, "egress_terms": egress_terms.EgressTerms}
CSVS = {"providers": providers.CSV, "storage_terms": storage_terms.CSV, "egress_terms": egress_terms.CSV}


def read(table: str) -> pl.DataFrame:
    """A terms file as the refresh reads it."""
    return pl.read_csv(CSVS[table], infer_schema_length=None)


@pytest.fixture(scope="session")
def terms_frames() -> dict[str, pl.DataFrame]:
    return {table: MODELS[table].validate(read(table)) for table in MODELS}
