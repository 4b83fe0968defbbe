-- Orders redeemed before 0004_checkout get their checkout_orders and
-- order_coupons rows from the live use log (see the MySQL file of the same
-- version for the rules).

INSERT INTO checkout_orders (order_id, stacking, coupons, amount_cents, returned_cents, discount_cents, updated_at)
SELECT l.order_id,
  CASE WHEN SUM(CASE WHEN t.stacking = 'combinable' THEN 0 ELSE 1 END) = 0 THEN 'combinable' ELSE 'exclusive' END,
  0, MAX(l.order_amount_cents), 0, SUM(l.discount_cents), MAX(l.used_at)
FROM coupon_use_log l
JOIN user_coupons c ON c.id = l.coupon_id AND c.status = 'used' AND c.order_id = l.order_id
JOIN templates t ON t.id = c.template_id
WHERE l.undo_flag = 0
  AND NOT EXISTS (SELECT 1 FROM checkout_orders o WHERE o.order_id = l.order_id)
GROUP BY l.order_id;

INSERT OR IGNORE INTO order_coupons (order_id, coupon_id, template_id, created_at)
SELECT l.order_id, l.coupon_id, c.template_id, l.used_at
FROM coupon_use_log l
JOIN user_coupons c ON c.id = l.coupon_id AND c.status = 'used' AND c.order_id = l.order_id
WHERE l.undo_flag = 0
  AND NOT EXISTS (SELECT 1 FROM order_coupons oc WHERE oc.order_id = l.order_id AND oc.coupon_id = l.coupon_id)
ORDER BY l.used_at, l.coupon_id;

UPDATE checkout_orders
SET coupons = (SELECT COUNT(*) FROM order_coupons oc WHERE oc.order_id = checkout_orders.order_id)
WHERE coupons <> (SELECT COUNT(*) FROM order_coupons oc WHERE oc.order_id = checkout_orders.order_id);
