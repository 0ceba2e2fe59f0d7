"""AWS Spot Instance Advisor: interruption-frequency bands and savings per instance type.

The bands come from the feed's `ranges` labels ("<5%", "5-10%", ">20%"); their `max` values
(5, 11, 16, 22, 100) drive the console's dots and are not band bounds, so they are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any

from gpucat.schemas.errors import ParseError
from gpucat.schemas.records import InterruptionRate, Page, ParseItem, Rejected
from gpucat.scrapers import _json
from gpucat.scrapers.base import Fetcher, Source

HOST = "spot-bid-advisor.s3.amazonaws.com"
URL = f"https://{HOST}/spot-advisor-data.json"
_BAND = re.compile(r"^\s*(?:<\s*(?P<lt>\d+)|(?P<lo>\d+)\s*-\s*(?P<hi>\d+)|>\s*(?P<gt>\d+))\s*%\s*$")


def fetch(fetcher: Fetcher) -> Iterator[Page]:
    yield fetcher.get(URL)


def band_bounds(label: str) -> tuple[float, float]:
    """'<5%' -> (0, 5); '5-10%' -> (5, 10); '>20%' -> (20, 100)."""
    match = _BAND.match(label)
    if not match:
        raise ParseError(f"unrecognised interruption band label {label!r}")
    if match["lt"]:
        return 0.0, float(match["lt"])
    if match["gt"]:
        return float(match["gt"]), 100.0
    return float(match["lo"]), float(match["hi"])


def parse(body: IO[bytes], *, url: str, fetched_at: datetime) -> Iterator[ParseItem]:
    data = _json.page(body, "spot advisor data", kind=dict)
    ranges = {int(r["index"]): r["label"] for r in _json.member(data, "spot advisor data", "ranges")}
    advisor: dict[str, dict[str, dict[str, Any]]] = _json.member(data, "spot advisor data", "spot_advisor", kind=dict)
    bounds = {index: band_bounds(label) for index, label in ranges.items()}
    for region, by_os in sorted(advisor.items()):
        for os_name, by_type in sorted(by_os.items()):
            for instance_type, entry in sorted(by_type.items()):
                raw = {"region": region, "os": os_name, "instance_type": instance_type, **entry}
                band = entry.get("r")
                if band not in bounds:
                    yield Rejected("interruption_rates", (f"unknown_band_index: {band!r}",), raw)
                    continue
                lower, upper = bounds[band]
                yield InterruptionRate(
                    region=region,
                    instance_type=instance_type,
                    os=os_name,
                    interruption_band=ranges[band],
                    band_lower_pct=lower,
                    band_upper_pct=upper,
                    savings_pct=float(entry["s"]) if isinstance(entry.get("s"), int | float) else None,
                )


SOURCE = Source(
    name="aws-spot-advisor",
    provider="aws",
    description="EC2 Spot Instance Advisor: interruption bands and savings per instance type",
    tables=("interruption_rates",),
    hosts=frozenset({HOST}),
    fetch=fetch,
    parse=parse,
    docs_url="https://aws.amazon.com/ec2/spot/instance-advisor/",
)
