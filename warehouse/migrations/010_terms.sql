-- Provider terms: billing, stop and spot behaviour, storage and egress prices (reference data:
-- schemas/reference/terms/*.csv, validated by schemas/{providers,storage_terms,egress_terms}.py,
-- reloaded on refresh). Every row names the page checked (source_url), the day (verified_on)
-- and quotes the sentence or cell behind each figure (evidence); NULL = not published / not found.
-- Units: seconds, USD, GB = 10^9 bytes, a month = 730 hours, Gbit/s, MB/s.
CREATE TABLE providers (
    provider                 VARCHAR PRIMARY KEY,  -- joins offers.provider
    display_name             VARCHAR NOT NULL,
    billing_increment_s      INTEGER,              -- compute billed in steps of this many seconds
    min_charge_s             INTEGER,              -- shortest billed run, seconds
    min_charge_usd           DOUBLE,               -- smallest charge per run, USD
    stopped_instances_billed BOOLEAN,              -- the compute rate runs on while stopped
    spot_offered             BOOLEAN,
    spot_notice_s            INTEGER,              -- warning before a spot reclaim, seconds
    spot_disk_fate           VARCHAR,              -- kept | deleted | configurable
    ssh                      BOOLEAN,
    custom_docker            BOOLEAN,
    jupyter                  BOOLEAN,
    multi_node               BOOLEAN,
    fabric                   VARCHAR,              -- efa | infiniband | roce | ici (as offers.fabric)
    fabric_gbps_per_node     DOUBLE,               -- inter-node bandwidth per node, Gbit/s
    price_basis              VARCHAR,              -- instance | gpu: what the list price is per
    source_url               VARCHAR NOT NULL,
    verified_on              DATE NOT NULL,
    evidence                 VARCHAR,              -- 'columns: "quote" <url>' segments joined by ' || '
    notes                    VARCHAR
);

CREATE TABLE storage_terms (
    provider                 VARCHAR NOT NULL,
    kind                     VARCHAR NOT NULL,     -- container_disk | volume | network_volume | object_storage | local_nvme | block
    product                  VARCHAR NOT NULL,     -- the provider's name for it
    usd_per_gb_month         DOUBLE,               -- USD per GB-month (while running)
    usd_per_gb_month_stopped DOUBLE,               -- USD per GB-month while the instance is stopped, where stated
    original_currency        VARCHAR,
    original_price           DOUBLE,               -- as published, in original_currency per original_unit
    original_unit            VARCHAR,              -- GB-month | GiB-month | GB-hour | GiB-hour
    persists_on_stop         BOOLEAN,
    persists_on_terminate    BOOLEAN,
    billed_while_stopped     BOOLEAN,
    max_size_gb              DOUBLE,
    read_throughput_mb_s     DOUBLE,               -- published read throughput, MB/s
    source_url               VARCHAR NOT NULL,
    verified_on              DATE NOT NULL,
    evidence                 VARCHAR,
    notes                    VARCHAR,
    PRIMARY KEY (provider, kind, product)
);

CREATE TABLE egress_terms (
    provider                 VARCHAR NOT NULL,
    scope                    VARCHAR NOT NULL,     -- internet | inter_region | in_region | object_storage | filesystem
    tier                     INTEGER NOT NULL,     -- 1, 2, ... in order of monthly volume
    from_gb                  DOUBLE,               -- tier covers [from_gb, to_gb) GB of the month's traffic
    to_gb                    DOUBLE,               -- NULL = unbounded
    usd_per_gb               DOUBLE,
    original_price           DOUBLE,               -- USD per original_unit as published
    original_unit            VARCHAR,              -- GB | GiB
    free_allowance_gb_month  DOUBLE,
    source_url               VARCHAR NOT NULL,
    verified_on              DATE NOT NULL,
    evidence                 VARCHAR,
    notes                    VARCHAR,
    PRIMARY KEY (provider, scope, tier)
);
