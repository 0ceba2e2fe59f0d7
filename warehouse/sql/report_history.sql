-- The report's price history: the cheapest $/GPU-hour of each of the GPU models $models, per
-- market, over the window ($since .. $until), as a step line: a row where that cheapest price
-- changes (NULL: no offer then), at the window's start, and at its end.
--
-- In time that follows the versions overlapping the window (the changes in it and the offers
-- current at its start), times a log, never the whole history: each (model, market) numbers its
-- change times, each version covers a range [a, b) of them, and a segment tree gives the minimum
-- at every change time. A version is kept at the O(log n) tree nodes that exactly cover its range;
-- a time's minimum is the least over its leaf's ancestors.
WITH groups AS (
    SELECT gpu_model, market, row_number() OVER (ORDER BY gpu_model, market) AS grp
    FROM (SELECT DISTINCT gpu_model, market FROM offer_versions
          WHERE list_contains(CAST($models AS VARCHAR[]), gpu_model))
),
versions AS (
    SELECT g.grp, v.usd_per_gpu_hour AS price,
           greatest(v.valid_from, CAST($since AS TIMESTAMPTZ)) AS start,
           CASE WHEN v.valid_to <= CAST($until AS TIMESTAMPTZ) THEN v.valid_to END AS stop
    FROM offer_versions AS v
    JOIN groups AS g USING (gpu_model, market)
    WHERE v.usd_per_gpu_hour > 0 AND v.valid_from <= CAST($until AS TIMESTAMPTZ)
      AND (v.valid_to IS NULL OR v.valid_to > CAST($since AS TIMESTAMPTZ))
),
times AS (
    SELECT grp, start AS moment FROM versions
    UNION SELECT grp, stop FROM versions WHERE stop IS NOT NULL
    UNION SELECT grp, CAST($until AS TIMESTAMPTZ) FROM groups
),
moments AS (  -- i: the time's number within its group; m: how many times the group has
    SELECT grp, moment, row_number() OVER (PARTITION BY grp ORDER BY moment) - 1 AS i, count(*) OVER (PARTITION BY grp) AS m
    FROM times
),
trees AS (  -- the group's tree has 2^k leaves, at least m
    SELECT grp, k + CASE WHEN (1 << k) < m THEN 1 ELSE 0 END AS k
    FROM (SELECT DISTINCT grp, m, CAST(ceil(log2(m)) AS INTEGER) AS k FROM moments)
),
spans AS (  -- each version covers the times [a, b) of its group; leaves are numbered from 2^k
    SELECT v.grp, v.price, s.i + (1 << t.k) AS first_leaf, coalesce(e.i, s.m) + (1 << t.k) AS end_leaf
    FROM versions AS v
    JOIN moments AS s ON s.grp = v.grp AND s.moment = v.start
    LEFT JOIN moments AS e ON e.grp = v.grp AND e.moment = v.stop
    JOIN trees AS t ON t.grp = v.grp
),
bounds AS (  -- at each level a range of n leaves reaches (0 .. log2 n), its first and last node
    SELECT grp, price, (first_leaf + (1 << level) - 1) >> level AS lo, end_leaf >> level AS hi
    FROM (SELECT *, unnest(range(0, CAST(floor(log2(end_leaf - first_leaf)) AS INTEGER) + 1)) AS level FROM spans)
),
nodes AS (  -- the exact cover: at most the two edge nodes of each level
    SELECT grp, node, min(price) AS price
    FROM (SELECT grp, price, lo AS node FROM bounds WHERE lo < hi AND lo % 2 = 1
          UNION ALL
          SELECT grp, price, hi - 1 FROM bounds WHERE lo < hi AND hi % 2 = 1)
    GROUP BY grp, node
),
ancestors AS (
    SELECT mo.grp, mo.moment, (mo.i + (1 << t.k)) >> unnest(range(0, t.k + 1)) AS node
    FROM moments AS mo
    JOIN trees AS t USING (grp)
),
cheapest AS (  -- at each time, the least price over its leaf's ancestors
    SELECT a.grp, a.moment, min(n.price) AS price
    FROM ancestors AS a
    LEFT JOIN nodes AS n USING (grp, node)
    GROUP BY a.grp, a.moment
)
SELECT g.gpu_model, g.market, c.moment AS "at", c.price AS usd_per_gpu_hour
FROM (SELECT *, lag(price) OVER w AS before, row_number() OVER w AS nth
      FROM cheapest
      WINDOW w AS (PARTITION BY grp ORDER BY moment)) AS c
JOIN groups AS g USING (grp)
WHERE c.nth = 1 OR c.price IS DISTINCT FROM c.before OR c.moment = CAST($until AS TIMESTAMPTZ)
ORDER BY g.gpu_model, g.market, c.moment
