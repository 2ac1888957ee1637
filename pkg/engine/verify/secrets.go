package verify

import (
	"hash/crc32"
	"math"
	"regexp"
	"strings"

	"github.com/vulnscan/vulnscan/pkg/engine/finding"
)

// A secret's confidence comes from its value as it stands in the file at
// the reported lines: the detector's rule says only where to look. Nothing
// here ever puts the value (or part of it) in a reason.

type tokenFormat struct {
	name  string
	re    *regexp.Regexp
	check func(string) bool // a checksum, when the format has one
}

var tokenFormats = []tokenFormat{
	{"an AWS access key id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`), nil},
	{"a GitHub token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36}\b`), crc32Token},
	{"a GitHub fine-grained token", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b`), nil},
	{"an npm token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`), crc32Token},
	{"a GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20}\b`), nil},
	{"a Slack token", regexp.MustCompile(`\bxox[baprs]-[0-9]{8,}-[0-9A-Za-z-]{10,}`), nil},
	{"a Slack webhook", regexp.MustCompile(`https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}`), nil},
	{"a Stripe live key", regexp.MustCompile(`\b[rs]k_live_[0-9A-Za-z]{24,}\b`), nil},
	{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), nil},
	{"a SendGrid key", regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b`), nil},
	{"a PyPI token", regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`), nil},
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// crc32Token checks the checksum of GitHub and npm tokens: the last six
// characters are the CRC-32 of the 30 random ones, in base 62.
func crc32Token(tok string) bool {
	_, body, ok := strings.Cut(tok, "_")
	if !ok || len(body) != 36 {
		return false
	}
	want := body[30:]
	n := uint64(crc32.ChecksumIEEE([]byte(body[:30])))
	var b [6]byte
	for i := 5; i >= 0; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	return n == 0 && string(b[:]) == want
}

var (
	keyBegin     = regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----`)
	keyEnd       = regexp.MustCompile(`-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----`)
	notBase64    = regexp.MustCompile(`\\[nr]|[^A-Za-z0-9+/=]`)
	quoted       = regexp.MustCompile("[\"'`]([^\"'`]{8,})[\"'`]")
	bareToken    = regexp.MustCompile(`[A-Za-z0-9_+/=.\-]{12,}`)
	placeholders = regexp.MustCompile(`(?i)example|sample|dummy|placeholder|changeme|change_me|replace[_-]?me|redacted|your[_-]|<[a-z _-]+>|\$\{|\{\{|fake|mock|xxxx|\*\*\*\*`)
	contextWords = regexp.MustCompile(`(?i)\b(example|sample|dummy|placeholder|fake|mock)s?\b|your[_ -](api[_ -]?)?(key|token|secret|password)|<your`)
)

// assessSecret rates a secret by its value: a provider format that checks
// out is high, a value that looks like a placeholder low, anything else
// medium.
func assessSecret(c finding.Finding, lines []string) (string, []string) {
	text := secretText(c, lines)
	if text == "" {
		return Medium, []string{"The secret's value could not be read back to check its format."}
	}
	context := text
	loc := keyBegin.FindStringIndex(text)
	if loc != nil {
		context = text[:loc[0]] // the key's body is random text
	}
	if m := contextWords.FindString(context); m != "" {
		return Low, []string{"The surrounding text calls it an example or placeholder (\"" + strings.ToLower(m) + "\")."}
	}
	if loc != nil {
		return assessPrivateKey(text[loc[0]:])
	}
	for _, f := range tokenFormats {
		tok := f.re.FindString(text)
		switch {
		case tok == "":
			continue
		case placeholderValue(tok) != "":
			return Low, []string{"It has the format of " + f.name + " but " + placeholderValue(tok) + "."}
		case f.check != nil && !f.check(tok):
			return Low, []string{"It has the format of " + f.name + " but its checksum is wrong, so it is not a real token."}
		case f.check != nil:
			return High, []string{"Secret format checked: " + f.name + " with a valid checksum."}
		}
		return High, []string{"Secret format checked: " + f.name + "."}
	}
	values := quoted.FindAllStringSubmatch(text, -1)
	var vals []string
	for _, v := range values {
		vals = append(vals, v[1])
	}
	if len(vals) == 0 {
		vals = bareToken.FindAllString(text, -1)
	}
	if len(vals) > 0 {
		all := true
		why := ""
		for _, v := range vals {
			w := placeholderValue(v)
			if w == "" {
				all = false
				break
			}
			why = w
		}
		if all {
			return Low, []string{"The value " + why + "."}
		}
	}
	return Medium, []string{"Detected by its name and randomness only; it has no provider format that can be checked."}
}

// secretText returns the reported lines of a secret (a private key block
// through its end line).
func secretText(c finding.Finding, lines []string) string {
	if c.StartLine < 1 || c.StartLine > len(lines) {
		return ""
	}
	end := min(max(c.EndLine, c.StartLine), len(lines))
	if keyBegin.MatchString(lines[c.StartLine-1]) && !keyEnd.MatchString(strings.Join(lines[c.StartLine-1:end], "\n")) {
		for end < len(lines) && end-c.StartLine < 200 {
			end++
			if keyEnd.MatchString(lines[end-1]) {
				break
			}
		}
	}
	return strings.Join(lines[c.StartLine-1:end], "\n")
}

func assessPrivateKey(block string) (string, []string) {
	body := keyBegin.ReplaceAllString(block, "")
	if loc := keyEnd.FindStringIndex(body); loc != nil {
		body = body[:loc[0]]
	}
	encrypted := strings.Contains(block, "ENCRYPTED")
	// header lines of the traditional format ("Proc-Type: 4,ENCRYPTED")
	var kept []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, ": ") && !strings.Contains(l, "\"") {
			continue
		}
		kept = append(kept, l)
	}
	b64 := notBase64.ReplaceAllString(strings.Join(kept, "\n"), "")
	switch {
	case strings.Contains(body, "...") || strings.Contains(strings.ToLower(body), "redacted") || strings.Contains(body, "XXXX"):
		return Low, []string{"The private key block is elided or redacted, so it holds no usable key."}
	case len(b64) < 100:
		return Low, []string{"The private key block is too short to hold a key."}
	case entropy(b64) < 4.5:
		return Low, []string{"The private key block is not random enough to be a real key."}
	case encrypted:
		return Medium, []string{"A private key block with a random body, but encrypted with a passphrase."}
	}
	return High, []string{"Secret format checked: a private key block with a random body."}
}

// placeholderValue says why a value looks like a placeholder or a sample,
// or "" when it does not.
func placeholderValue(v string) string {
	if m := placeholders.FindString(v); m != "" {
		return "contains \"" + strings.ToLower(m) + "\" like a placeholder"
	}
	if repeatedRun(v, 6) {
		return "repeats one character like a placeholder"
	}
	l := strings.ToLower(v)
	for _, seq := range []string{"0123456", "1234567", "abcdefg", "qwerty"} {
		if strings.Contains(l, seq) {
			return "contains a keyboard or counting sequence like a sample value"
		}
	}
	if len(v) >= 16 && entropy(v) < 3.0 {
		return "is not random enough to be a real credential"
	}
	return ""
}

func repeatedRun(s string, n int) bool {
	run := 1
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			run++
			if run >= n {
				return true
			}
		} else {
			run = 1
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	e := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			e -= p * math.Log2(p)
		}
	}
	return e
}
