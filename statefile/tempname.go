package statefile

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// Temp file names. A save writes "." + stem + digits beside the state file,
// digits being a random non-negative int64 in decimal (at most 19), and
// renames it over the file. For a name of up to maxStemBytes the stem is
// the name itself: the shape renameio gives its temp files (tempfile.go,
// openTempFile), kept so that releases of this package that used renameio
// and this one sweep each other's leftovers. A longer name would
// make the temp name longer than a directory entry may be: 255 bytes on
// Linux (NAME_MAX, include/uapi/linux/limits.h; ext4, xfs, btrfs and tmpfs
// all refuse more with ENAMETOOLONG) and macOS (<sys/syslimits.h>), so a
// name of 236 to 255 bytes, legal for the state file, could never be saved.
// For such a name the stem is the name's first longStemPrefix bytes, cut
// where a character starts, then "~" and 16 hex digits of the SHA-256 of
// the whole name: the temp name stays within 255 bytes, and two long names
// with a common start still get different stems. The sweep (sweep.go)
// recognises both shapes.
//
// Windows counts a name in UTF-16 code units, 255 per component on NTFS
// (GetVolumeInformation's lpMaximumComponentLength), but a volume backed
// by a Unix file system (a Samba share, Wine's drives) counts its UTF-8
// bytes. A character takes at least as many UTF-8 bytes as UTF-16 units,
// so the stem is measured in bytes there too, and the temp name fits both:
// a Windows name of 255 units but more bytes gets a long stem.
const (
	maxNameBytes   = 255                               // longest directory entry
	maxTempDigits  = 19                                // len("9223372036854775807")
	maxStemBytes   = maxNameBytes - 1 - maxTempDigits  // 235: "." + stem + digits fits
	stemHashDigits = 16                                // hex digits of SHA-256 in a long stem: 64 bits
	longStemPrefix = maxStemBytes - 1 - stemHashDigits // 218 bytes of the name kept in a long stem
)

// tempStem returns the stem of the temp names of the state file named base.
func tempStem(base string) string {
	if len(base) <= maxStemBytes {
		return base
	}
	cut := longStemPrefix
	for cut > 0 && !utf8.RuneStart(base[cut]) {
		cut-- // not inside a character
	}
	sum := sha256.Sum256([]byte(base))
	return base[:cut] + "~" + hex.EncodeToString(sum[:stemHashDigits/2])
}

// isLongStem reports whether stem could be a long name's stem: it ends
// with "~" and stemHashDigits lowercase hex digits. The sweep asks it before
// looking for the long name a stem belongs to.
func isLongStem(stem string) bool {
	n := len(stem) - stemHashDigits - 1
	if n < 0 || stem[n] != '~' {
		return false
	}
	for _, c := range []byte(stem[n+1:]) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
