-- `offers` is the name people type (and the table `gpucat parse` names): an alias of the
-- current offers. It selects * so columns later migrations add to current_offers reach it too.
CREATE VIEW offers AS
SELECT * FROM current_offers;
