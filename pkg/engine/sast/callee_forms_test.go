package sast_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vulnscan/vulnscan/pkg/engine/sast"
)

// TestPatternCalleeForms: a rule's callee is matched against the call as
// the language writes it (receiver, separator, method), so a method of the
// same name on another receiver is not the flagged function.
func TestPatternCalleeForms(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, src string }{
		{"ruby receivers of rand", "lib/r.rb", `session_token = Random.new.rand(10**8) # want:ruby.crypto.weak-random
reset_code = Kernel.rand(999_999) # want:ruby.crypto.weak-random
otp = [1, 2, 3].sample # want:ruby.crypto.weak-random
session_token = SecureRandom.rand(10**8)
session_id = SecureRandom.uuid
`},
		{"ruby digest forms", "lib/d.rb", `pw = ::Digest::SHA1.hexdigest(password) # want:ruby.crypto.weak-password-hash
pw = OpenSSL::Digest::MD5.new.digest(secret) # want:ruby.crypto.weak-password-hash
pw = Digest::SHA256.hexdigest(password)
`},
		{"php functions versus methods", "web/m.php", `<?php
$token = rand(); // want:php.crypto.weak-random
$token = $generator->rand();
$token = Random::rand();
$token = random_bytes(16);
`},
		{"java factories", "src/main/java/F.java", `class F {
  Object a() { return SAXParserFactory.newInstance(); } // want:java.xxe.document-builder
  Object b() { return other.SAXParserFactory.create(); }
}
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, want := patternHits(t, tc.file, tc.src)
			require.Equal(t, want, got)
		})
	}
}

func TestLanguageOfFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{"app/views.py", "python"},
		{"src/index.js", "javascript"},
		{"src/App.java", "java"},
		{"cmd/main.go", "go"},
		{"web/index.php", "php"},
		{"lib/task.rb", "ruby"},
		{"README.md", ""},
		{"Makefile", ""},
	} {
		require.Equal(t, tc.want, sast.Language(tc.file), tc.file)
	}
}
