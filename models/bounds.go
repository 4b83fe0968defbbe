package models

// MaxTypedCodeLen bounds a coupon code as typed, spaces and dashes included
// (ParseCouponCode); the OpenAPI document states it as maxLength.
const MaxTypedCodeLen = maxTypedCodeLen

// MaxUserIDLen is the longest user id (ValidateUserID), in characters.
const MaxUserIDLen = 64
