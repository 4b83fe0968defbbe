-- Returns by line (docs/returns.md): a return of units of an order's lines
-- keeps its answer (the returned lines with their refunds and discounts, as
-- JSON) on its order_returns row, so that the same return_id again is
-- answered with it, and another set of lines under that id is refused.
-- NULL for a return of an amount.
ALTER TABLE order_returns
  ADD COLUMN return_lines MEDIUMTEXT NULL;
