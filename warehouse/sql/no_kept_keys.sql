-- No kept keys this load: an empty `kept` with the types of the batch's key columns ({keys}: from code).
CREATE OR REPLACE TEMP TABLE kept AS SELECT {keys} FROM staged WHERE false
