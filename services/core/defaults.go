package core

// PositiveOr gives a setting its default d when it was left at zero (or
// set below it): every aggregate's Config fills its defaults this way, so
// a zero Config is the default one (docs/architecture.md).
func PositiveOr[T ~int | ~int64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
