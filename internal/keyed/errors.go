package keyed

import "strings"

// joinedError is errors.Join's result with its text on one line (errors.Join
// puts a newline between the parts), so that one-line logs stay whole.
type joinedError []error

func (e joinedError) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return strings.Join(parts, "; ")
}

func (e joinedError) Unwrap() []error { return e }

// JoinErrs is errors.Join with a one-line text: nil when every err is nil,
// the error itself when only one is not and its text is one line.
func JoinErrs(errs ...error) error {
	var e joinedError
	for _, err := range errs {
		if err != nil {
			e = append(e, err)
		}
	}
	switch {
	case len(e) == 0:
		return nil
	case len(e) == 1 && !strings.Contains(e[0].Error(), "\n"):
		return e[0]
	}
	return e
}
