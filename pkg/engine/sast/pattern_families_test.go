package sast_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPatternRuleFamilies covers the crypto, cookie, CORS, JWT, secret,
// XXE and deserialisation pattern rules of each language: every case holds
// lines that must trigger (marked want:<rule>) and look-alikes that must not.
func TestPatternRuleFamilies(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, src string }{
		// Python
		{"python weak hash", "app/h.py", `import hashlib
h = hashlib.md5(data)  # want:python.crypto.weak-hash
h = hashlib.new("sha1")  # want:python.crypto.weak-hash
h = hashlib.md5(data, usedforsecurity=False)
h = hashlib.sha256(data)
`},
		{"python weak cipher", "app/c.py", `from Crypto.Cipher import AES, DES
c = DES.new(key)  # want:python.crypto.weak-cipher
c = AES.new(key, AES.MODE_ECB)  # want:python.crypto.weak-cipher
c = AES.new(key, AES.MODE_GCM)
`},
		{"python weak random for secrets", "app/r.py", `import random
token = random.randint(0, 10**6)  # want:python.crypto.weak-random
delay = random.randint(0, 10)
`},
		{"python cookie", "app/v.py", `resp.set_cookie("sid", sid)  # want:python.cookie.insecure
resp.set_cookie("sid", sid, secure=True, httponly=True)
`},
		{"python cors", "app/cors.py", `from flask_cors import CORS
CORS(app, supports_credentials=True)  # want:python.cors.credentials-any-origin
CORS(app, supports_credentials=True, origins=["https://app.example.com"])
CORS(app)
resp.headers["Access-Control-Allow-Origin"] = request.headers.get("Origin")  # want:python.cors.reflect-origin
resp.headers["Access-Control-Allow-Origin"] = "https://app.example.com"
`},
		{"python jwt", "app/j.py", `import jwt
claims = jwt.decode(tok, options={"verify_signature": False})  # want:python.jwt.unverified
claims = jwt.decode(tok, key, algorithms=["HS256"])
`},
		{"python secret", "app/settings_prod.py", `DB_PASSWORD = "s3cr3t-value"  # want:python.secrets.hardcoded-credential
DB_PASSWORD = "changeme"
DB_PASSWORD = os.environ["DB_PASSWORD"]
`},
		{"python xxe and nosql", "app/x.py", `from lxml import etree
p = etree.XMLParser(resolve_entities=True)  # want:python.xxe.resolve-entities
p = etree.XMLParser(resolve_entities=False)
db.users.find({"$where": "this.name == '" + name + "'"})  # want:python.nosqli.where
db.users.find({"name": name})
`},
		// JavaScript
		{"js crypto", "src/c.js", `const crypto = require("crypto");
const c = crypto.createCipher("aes-256-cbc", key); // want:js.crypto.cipher-without-iv
const d = crypto.createCipheriv("aes-256-gcm", key, iv);
const resetToken = Math.random().toString(36); // want:js.crypto.weak-random
const jitter = Math.random() * 100;
`},
		{"js cookie and cors", "src/s.js", `res.cookie("sid", sid); // want:js.cookie.insecure
res.cookie("sid", sid, { secure: true, httpOnly: true });
app.use(cors({ origin: true, credentials: true })); // want:js.cors.credentials-any-origin
app.use(cors({ origin: "https://app.example.com", credentials: true }));
res.setHeader("Access-Control-Allow-Origin", req.headers.origin); // want:js.cors.reflect-origin
res.setHeader("Access-Control-Allow-Origin", "https://app.example.com");
`},
		{"js jwt none", "src/j.js", `const jwt = require("jsonwebtoken");
jwt.verify(tok, key, { algorithms: ["HS256", "none"] }); // want:js.jwt.none-algorithm
jwt.verify(tok, key, { algorithms: ["HS256"] });
`},
		{"js jwt decode without verify", "src/d.js", `const jwt = require("jsonwebtoken");
const claims = jwt.decode(tok); // want:js.jwt.unverified
`},
		{"js jwt decode next to verify", "src/v.js", `const jwt = require("jsonwebtoken");
jwt.verify(tok, key, { algorithms: ["HS256"] });
const claims = jwt.decode(tok);
`},
		{"js secret and xxe", "src/k.js", `const apiKey = "sk_live_abcdef"; // want:js.secrets.hardcoded-credential
const apiKeyDoc = "<your-key>";
const doc = libxml.parseXml(xml, { noent: true }); // want:js.xxe.noent
const safe = libxml.parseXml(xml, { noent: false });
`},
		// Java
		{"java crypto and jwt", "src/main/java/A.java", `class A {
  String h(String s) { return DigestUtils.md5Hex(s); } // want:java.crypto.weak-hash-digest-utils
  String g(String s) { return DigestUtils.sha256Hex(s); }
  int sessionId() { return new Random().nextInt(); } // want:java.crypto.weak-random
  int dice() { return new Random().nextInt(6); }
  Object c(String t) { return Jwts.parser().setSigningKey(k).parse(t); } // want:java.jwt.unverified
}
`},
		{"java cors and secrets", "src/main/java/B.java", `class B {
  private String dbPassword = "hunter2-prod"; // want:java.secrets.hardcoded-credential
  private String dbPasswordHint = "changeme";
  void f(HttpServletRequest request, HttpServletResponse resp) {
    resp.setHeader("Access-Control-Allow-Origin", request.getHeader("Origin")); // want:java.cors.reflect-origin
    resp.setHeader("Access-Control-Allow-Origin", "https://app.example.com");
  }
}
`},
		{"java xxe", "src/main/java/X.java", `class X {
  Object f() { return DocumentBuilderFactory.newInstance(); } // want:java.xxe.document-builder
}
`},
		{"java xxe hardened", "src/main/java/Y.java", `class Y {
  Object f() throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return f;
  }
}
`},
		// Go
		{"go crypto", "pkg/c.go", `package c
import (
	"crypto/md5"
	"crypto/des"
	"crypto/sha256"
)
func f(b []byte) {
	_ = md5.Sum(b) // want:go.crypto.weak-hash
	_, _ = des.NewCipher(b) // want:go.crypto.weak-cipher
	_ = sha256.Sum256(b)
}
`},
		{"go cookie, cors and jwt", "pkg/h.go", `package h
import "net/http"
func f(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: v}) // want:go.cookie.insecure
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: v, Secure: true})
	w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin")) // want:go.cors.reflect-origin
	w.Header().Set("Access-Control-Allow-Origin", "https://app.example.com")
	tok, _, _ := p.ParseUnverified(s, claims) // want:go.jwt.unverified
	_ = tok
}
`},
		{"go secret", "pkg/s.go", `package s
const apiKey = "AKIA1234567890" // want:go.secrets.hardcoded-credential
const apiKeyExample = "example"
`},
		// PHP
		{"php crypto and cookies", "web/a.php", `<?php
$hash = md5($password); // want:php.crypto.weak-password-hash
$etag = md5($body);
$token = mt_rand(); // want:php.crypto.weak-random
$dice = mt_rand(1, 6);
setcookie("sid", $sid); // want:php.cookie.insecure
setcookie("sid", $sid, ['secure' => true, 'httponly' => true]);
`},
		{"php session and secret", "web/b.php", `<?php
$_SESSION['user'] = $_GET['user']; // want:php.trustbound.session
$_SESSION['user'] = $user->id;
$db_password = "hunter2-prod"; // want:php.secrets.hardcoded-credential
$db_password = "changeme";
`},
		// Ruby
		{"ruby crypto and cookies", "app/a.rb", `digest = Digest::MD5.hexdigest(password) # want:ruby.crypto.weak-password-hash
etag = Digest::MD5.hexdigest(body)
token = rand(10**8) # want:ruby.crypto.weak-random
token = SecureRandom.hex(16)
cookies[:sid] = { value: sid } # want:ruby.cookie.insecure
cookies[:sid] = { value: sid, secure: true }
`},
		{"ruby secret", "app/b.rb", `API_KEY = "sk_live_abcdef" # want:ruby.secrets.hardcoded-credential
API_KEY = "changeme"
`},
		// Callees are matched as the language writes the call (receiver,
		// separator, method): a method of the same name on another receiver
		// is not the flagged function.
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
