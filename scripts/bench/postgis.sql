-- Geofencing in PostgreSQL + PostGIS, index-friendly forms only (run by scripts/bench-compare.sh):
--   psql -v regions_csv=/abs/regions.csv -v fixes_csv=/abs/fixes.csv -f postgis.sql
-- (server-side COPY: absolute paths the server can read)
--
-- Same question as `regionkit bench geofence`: for every fix, which regions' circles contain it
-- (great-circle distance to the centre <= radius). Distances are PostGIS geography on the sphere
-- (use_spheroid => false, PostGIS's sphere of radius (2a+b)/3 = 6,371,008.77 m), the model RegionKit
-- uses (haversine, R = 6,371,008.8 m), so both sides must find the same (fix, region) pairs.
--
-- ST_DWithin(center, fix, radius) with the radius a column of the indexed table cannot use the
-- GiST index, so the forms measured are:
--   per_fix      one query per fix (a PL/pgSQL loop inside the server: no client round trip):
--                ST_DWithin(center, fix, <max radius>) prefilter on the GiST-indexed regions
--                (geography), then the exact per-row ST_DWithin(center, fix, radius).
--   per_fix_box  one query per fix, prefilter on a GiST index of each region's own bounding box
--                (its circle's lat/lon envelope, geometry), then the same exact test.
--   join_max     one set-based join of all fixes with the constant max-radius prefilter.
--   join_fixes   one set-based join driven by the regions, probing a GiST index on the fixes with
--                each region's own radius (a constant per probe, so the index applies).
--   join_box     one set-based join on the regions' bounding boxes (geometry GiST), exact test.
-- The joins' plans are the planner's choice (printed below).
-- One worker per query (max_parallel_workers_per_gather = 0), like the single-core RegionKit side;
-- the joins run three times and the fastest counts (warm caches).
\set ON_ERROR_STOP on
\pset pager off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;

CREATE EXTENSION IF NOT EXISTS postgis;

CREATE TABLE regions_csv (id integer, latitude float8, longitude float8, radius float8);
CREATE TABLE fixes_csv (id integer, time float8, latitude float8, longitude float8, accuracy float8);
COPY regions_csv FROM :'regions_csv' WITH (FORMAT csv, HEADER true);
COPY fixes_csv FROM :'fixes_csv' WITH (FORMAT csv, HEADER true);

-- reach: the circle's envelope in degrees, 1% wider than the sphere needs (a prefilter may only
-- over-select): half-height r/R in radians, half-width that over the cosine of the latitude
-- nearest the pole within the box.
CREATE TABLE regions AS
    SELECT id, radius,
           ST_SetSRID(ST_MakePoint(longitude, latitude), 4326)::geography AS center,
           ST_MakeEnvelope(longitude - dlat / cos(radians(least(89.9, abs(latitude) + dlat))), latitude - dlat,
                           longitude + dlat / cos(radians(least(89.9, abs(latitude) + dlat))), latitude + dlat, 4326) AS reach
      FROM (SELECT *, degrees(radius * 1.01 / 6371008.8) AS dlat FROM regions_csv) AS c;
ALTER TABLE regions ADD PRIMARY KEY (id);
CREATE INDEX regions_center ON regions USING gist (center);
CREATE INDEX regions_reach ON regions USING gist (reach);
CREATE TABLE fixes AS
    SELECT id, ST_SetSRID(ST_MakePoint(longitude, latitude), 4326)::geography AS pos,
           ST_SetSRID(ST_MakePoint(longitude, latitude), 4326) AS pt
      FROM fixes_csv;
ALTER TABLE fixes ADD PRIMARY KEY (id);
CREATE INDEX fixes_pos ON fixes USING gist (pos);
CREATE INDEX fixes_pt ON fixes USING gist (pt);
VACUUM ANALYZE regions;
VACUUM ANALYZE fixes;

SELECT max(radius) AS max_radius FROM regions \gset

CREATE FUNCTION bench_per_fix(max_radius float8,
                              OUT seconds float8, OUT fixes bigint, OUT pairs bigint, OUT checksum numeric)
LANGUAGE plpgsql AS $$
DECLARE
    fix record;
    started timestamptz;
    hits bigint;
    sum_ids numeric;
BEGIN
    fixes := 0; pairs := 0; checksum := 0;
    started := clock_timestamp();
    FOR fix IN SELECT id, pos FROM fixes ORDER BY id LOOP
        SELECT count(*), coalesce(sum(fix.id::bigint * 1000003 + r.id), 0) INTO hits, sum_ids
          FROM regions r
         WHERE ST_DWithin(r.center, fix.pos, max_radius, false)
           AND ST_DWithin(r.center, fix.pos, r.radius, false);
        fixes := fixes + 1;
        pairs := pairs + hits;
        checksum := checksum + sum_ids;
    END LOOP;
    seconds := extract(epoch FROM clock_timestamp() - started);
END $$;

CREATE FUNCTION bench_per_fix_box(OUT seconds float8, OUT fixes bigint, OUT pairs bigint, OUT checksum numeric)
LANGUAGE plpgsql AS $$
DECLARE
    fix record;
    started timestamptz;
    hits bigint;
    sum_ids numeric;
BEGIN
    fixes := 0; pairs := 0; checksum := 0;
    started := clock_timestamp();
    FOR fix IN SELECT id, pos, pt FROM fixes ORDER BY id LOOP
        SELECT count(*), coalesce(sum(fix.id::bigint * 1000003 + r.id), 0) INTO hits, sum_ids
          FROM regions r
         WHERE r.reach && fix.pt
           AND ST_DWithin(r.center, fix.pos, r.radius, false);
        fixes := fixes + 1;
        pairs := pairs + hits;
        checksum := checksum + sum_ids;
    END LOOP;
    seconds := extract(epoch FROM clock_timestamp() - started);
END $$;

CREATE FUNCTION bench_join_box(OUT seconds float8, OUT pairs bigint, OUT checksum numeric)
LANGUAGE plpgsql AS $$
DECLARE started timestamptz;
BEGIN
    started := clock_timestamp();
    SELECT count(*), sum(f.id::bigint * 1000003 + r.id) INTO pairs, checksum
      FROM fixes f JOIN regions r
        ON r.reach && f.pt
       AND ST_DWithin(r.center, f.pos, r.radius, false);
    seconds := extract(epoch FROM clock_timestamp() - started);
END $$;

CREATE FUNCTION bench_join_max(max_radius float8, OUT seconds float8, OUT pairs bigint, OUT checksum numeric)
LANGUAGE plpgsql AS $$
DECLARE started timestamptz;
BEGIN
    started := clock_timestamp();
    SELECT count(*), sum(f.id::bigint * 1000003 + r.id) INTO pairs, checksum
      FROM fixes f JOIN regions r
        ON ST_DWithin(r.center, f.pos, max_radius, false)
       AND ST_DWithin(r.center, f.pos, r.radius, false);
    seconds := extract(epoch FROM clock_timestamp() - started);
END $$;

CREATE FUNCTION bench_join_fixes(OUT seconds float8, OUT pairs bigint, OUT checksum numeric)
LANGUAGE plpgsql AS $$
DECLARE started timestamptz;
BEGIN
    started := clock_timestamp();
    SELECT count(*), sum(f.id::bigint * 1000003 + r.id) INTO pairs, checksum
      FROM regions r JOIN fixes f
        ON ST_DWithin(f.pos, r.center, r.radius, false);
    seconds := extract(epoch FROM clock_timestamp() - started);
END $$;

-- The plans, so the log shows the index is used.
\echo plan: per_fix
EXPLAIN (COSTS OFF) SELECT count(*) FROM regions r
 WHERE ST_DWithin(r.center, 'SRID=4326;POINT(9 48.5)'::geography, :max_radius, false)
   AND ST_DWithin(r.center, 'SRID=4326;POINT(9 48.5)'::geography, r.radius, false);
\echo plan: per_fix_box
EXPLAIN (COSTS OFF) SELECT count(*) FROM regions r
 WHERE r.reach && 'SRID=4326;POINT(9 48.5)'::geometry
   AND ST_DWithin(r.center, 'SRID=4326;POINT(9 48.5)'::geography, r.radius, false);
\echo plan: join_max
EXPLAIN (COSTS OFF) SELECT count(*) FROM fixes f JOIN regions r
    ON ST_DWithin(r.center, f.pos, :max_radius, false) AND ST_DWithin(r.center, f.pos, r.radius, false);
\echo plan: join_fixes
EXPLAIN (COSTS OFF) SELECT count(*) FROM regions r JOIN fixes f ON ST_DWithin(f.pos, r.center, r.radius, false);
\echo plan: join_box
EXPLAIN (COSTS OFF) SELECT count(*) FROM fixes f JOIN regions r ON r.reach && f.pt AND ST_DWithin(r.center, f.pos, r.radius, false);

-- Results: one line per run, `form|fixes|seconds|pairs|checksum`.
\pset format unaligned
\pset tuples_only on
SELECT 'postgis_version', postgis_lib_version();
SELECT 'join_max', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_max(:max_radius);
SELECT 'join_max', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_max(:max_radius);
SELECT 'join_max', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_max(:max_radius);
SELECT 'join_fixes', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_fixes();
SELECT 'join_fixes', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_fixes();
SELECT 'join_fixes', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_fixes();
SELECT 'join_box', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_box();
SELECT 'join_box', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_box();
SELECT 'join_box', (SELECT count(*) FROM fixes), seconds, pairs, checksum FROM bench_join_box();
SELECT 'per_fix', fixes, seconds, pairs, checksum FROM bench_per_fix(:max_radius);
SELECT 'per_fix_box', fixes, seconds, pairs, checksum FROM bench_per_fix_box();
