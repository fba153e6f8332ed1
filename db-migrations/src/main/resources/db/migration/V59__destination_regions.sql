-- The memory a target incarnation offers as transfer destinations, registered per rank before any
-- destination may name it (like bank parts for sources). A region reference is held by one live
-- incarnation of a host at a time.
CREATE TABLE destination_region (
    incarnation_id   UUID        NOT NULL REFERENCES engine_incarnation (incarnation_id),
    rank             INTEGER     NOT NULL CHECK (rank BETWEEN 0 AND 63),
    region_ref       TEXT        NOT NULL CHECK (length(region_ref) BETWEEN 1 AND 500),
    capacity_blocks  INTEGER     NOT NULL CHECK (capacity_blocks > 0),
    registered_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (incarnation_id, rank, region_ref)
);

CREATE INDEX destination_region_ref ON destination_region (region_ref);
CREATE INDEX bank_part_region_ref ON bank_part (region_ref);
