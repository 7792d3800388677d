package xwin

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strings"
)

// Screenshot takes a picture of display's root window with ImageMagick's
// import(1) (Debian: imagemagick).
func Screenshot(display string) (image.Image, error) {
	cmd := exec.Command("import", "-window", "root", "png:-")
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("xwin: import: %w: %s", err, stderr.Bytes())
	}
	return png.Decode(bytes.NewReader(out))
}

// OCR reads the text of img with tesseract(1) (Debian: tesseract-ocr).
func OCR(img image.Image) (string, error) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return "", err
	}
	cmd := exec.Command("tesseract", "stdin", "stdout")
	cmd.Stdin = &b
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("xwin: tesseract: %w", err)
	}
	return string(out), nil
}

// Letters keeps the letters, digits and # of s, lower-cased, for comparing
// what OCR read: tesseract reads the gaps around a tab (drawn as a box) and
// the caret as spaces, quotes or nothing from one screenshot to the next.
func Letters(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '#':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}
