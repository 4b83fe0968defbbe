package models

// MaxTypedCodeLen bounds a coupon code as typed, spaces and dashes included
// (ParseCouponCode); the OpenAPI document states it as maxLength.
const MaxTypedCodeLen = maxTypedCodeLen
