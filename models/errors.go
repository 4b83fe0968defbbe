// Package models holds the domain of couponsvc: the GORM structs, their
// validation, the pure rules (discounts, coupon codes, effective status) and the
// one domain error type. It imports no other package of the service.
package models

import (
	"errors"
	"fmt"
)

// Code is a result code of the API (docs/result-codes.md). Its number, its
// words and their HTTP statuses are part of the public contract and never
// change meaning; they are rows of the result table (Results).
type Code int

// The result codes (see docs/result-codes.md).
const (
	CodeOK                  Code = 0
	CodeDuplicate           Code = 1
	CodeSoldOut             Code = 2
	CodeInvalidRequest      Code = 3
	CodeUserLimitReached    Code = 4
	CodeBudgetExhausted     Code = 5
	CodeNotClaimable        Code = 6
	CodeAlreadyUsed         Code = 7
	CodeNotValidNow         Code = 8
	CodeBelowMinimum        Code = 9
	CodeNotFound            Code = 10
	CodeBusy                Code = 11
	CodeIdempotencyMismatch Code = 12
	CodeNotRedeemed         Code = 13
	CodeUnauthorized        Code = 14 // also "forbidden", told apart by Error.Forbidden
	CodeUnavailable         Code = 15
	CodeRateLimited         Code = 16
	CodeRevoked             Code = 17
	CodeInProgress          Code = 18
	CodeHeld                Code = 19 // the coupon is held by another order
	CodeNotCombinable       Code = 20
	CodeHoldExpired         Code = 21
	CodeReturnExceedsOrder  Code = 22
	CodeCurrencyMismatch    Code = 23 // a coupon of another currency than the cart
	CodeInUse               Code = 24 // a delete of a template or campaign that issued coupons
	CodeConditionNotMet     Code = 25 // the cart does not hold what the template's condition asks
	CodeNotEligible         Code = 26 // the customer does not meet the template's eligibility rule
	CodeCampaignLimit       Code = 27 // the customer holds per_customer_limit coupons of the campaign
	// CodeInternal is never part of a result body: it marks a bug, answered 500
	// and logged.
	CodeInternal Code = 99
)

// Word returns the "result" word of the code in error bodies: its first row
// of the result table (results.go), "internal" for a code without one.
func (c Code) Word() string { return c.Result().Word }

// Error is the one domain error of couponsvc. Services translate driver errors
// into it at their boundary; handlers answer it with the status and word of its
// row of the result table (Error.Result).
type Error struct {
	Code Code
	// Field names the request field at fault, for CodeInvalidRequest: the
	// first of Fields when there are several.
	Field string
	// Fields lists every field at fault when validation found several (see
	// FieldErrors); Field and Message are then those of the first.
	Fields []FieldError
	// Message is for people: it is shown to the caller as is.
	Message string
	// Forbidden marks a CodeUnauthorized that is a wrong role or someone else's
	// resource (403) rather than missing credentials (401).
	Forbidden bool
	// RetryAfterSeconds, when set, is sent as the Retry-After header.
	RetryAfterSeconds int
	// Err is the cause, kept for logs and errors.Is; never shown to callers.
	Err error
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code.Word(), msg, e.Err)
	}
	return e.Code.Word() + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a domain error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns a CodeInvalidRequest error that names the field at fault.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Unavailable wraps a fault of Redis or the database: the caller gets 503.
func Unavailable(what string, err error) *Error {
	return &Error{Code: CodeUnavailable, Message: what + " is unavailable, try again shortly", RetryAfterSeconds: 1, Err: err}
}

// ErrorCode returns the code of err: CodeOK for nil, CodeInternal for an error
// that is not a domain error.
func ErrorCode(err error) Code {
	if err == nil {
		return CodeOK
	}
	// A refusal is most often the error itself: told without errors.As,
	// whose target would cost an allocation per answer.
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	return codeInChain(err)
}

func codeInChain(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsCode reports whether err is a domain error with that code.
func IsCode(err error, code Code) bool {
	return err != nil && ErrorCode(err) == code
}
