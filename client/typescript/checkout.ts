// A shop's checkout with the TypeScript client generated from couponsvc's
// OpenAPI document (couponsvc.d.ts, by openapi-typescript): price a cart,
// hold its coupons while the order is paid, confirm the hold. CI
// type-checks it against today's document (check.sh): a renamed field, a
// changed type or a removed operation fails the check.
import createClient from "openapi-fetch";
import type { components, paths } from "./couponsvc.d.ts";

type CartLine = components["schemas"]["CartLine"];
type CheckoutAnswer = components["schemas"]["CheckoutAnswer"];

export async function checkout(baseUrl: string, token: string, orderId: string, codes: string[]): Promise<number> {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
  const lines: CartLine[] = [
    { line_id: "1", sku: "SHIRT", quantity: 1, unit_price_cents: 2500 },
    { line_id: "2", sku: "SOCKS", quantity: 2, unit_price_cents: 500, category_ids: ["socks"] },
  ];

  const priced = await api.POST("/api/v1/checkout/validate", {
    body: { coupon_codes: codes, lines, order_id: orderId, user_id: "alice" },
  });
  if (priced.error) throw new Error(`validate: ${priced.error.result}: ${priced.error.error}`);
  const discount: number = priced.data.discount_cents;

  const held = await api.POST("/api/v1/holds", {
    params: { header: { "Idempotency-Key": `hold-${orderId}` } },
    body: { order_id: orderId, coupon_codes: codes, lines, user_id: "alice", ttl_seconds: 600 },
  });
  if (held.error) throw new Error(`hold: ${held.error.result}: ${held.error.error}`);

  const confirmed = await api.POST("/api/v1/holds/{order_id}/confirm", {
    params: { path: { order_id: orderId }, header: { "Idempotency-Key": `confirm-${orderId}` } },
    body: { lines },
  });
  if (confirmed.error) throw new Error(`confirm: ${confirmed.error.result}: ${confirmed.error.error}`);
  const answer: CheckoutAnswer = confirmed.data;
  if (answer.discount_cents !== discount) throw new Error("the confirmed discount is not the validated one");
  return answer.payable_cents;
}
