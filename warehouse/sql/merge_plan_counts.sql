-- How many current versions each action of the plan touches, and how many of those it would
-- close before they began (valid_from after this batch's time): a load with any is refused.
SELECT action, count(*) AS versions, count(*) FILTER (WHERE valid_from > $observed_at) AS inverted
FROM merge_plan
GROUP BY action
