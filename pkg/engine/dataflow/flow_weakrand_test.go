package dataflow_test

import "testing"

// Weak randomness is an opt-in class: a predictable value reaching a
// secret-bearing use is reported, a cryptographic generator is not, and
// weak random values never count as request data.
func TestFlowWeakRandomness(t *testing.T) {
	t.Parallel()
	// goCookie is a handler that makes a value with the given rand package
	// and sets it as a secure cookie.
	goCookie := func(randPkg, gen, value, mark string) []src {
		return one("app/h.go", `package app

import (
	"encoding/hex"
	"net/http"
	"strconv"
	"`+randPkg+`"
)

var _, _ = hex.EncodeToString, strconv.Itoa

func h(w http.ResponseWriter, r *http.Request) {
	`+gen+`
	http.SetCookie(w, &http.Cookie{Name: "s", Value: `+value+`, Secure: true, HttpOnly: true})`+mark+`
}
`)
	}
	runFlowCases(t, []flowCase{
		{"java Random into a cookie", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) {
    String v = Long.toString(new java.util.Random().nextLong());
    resp.addCookie(new Cookie("session", v)); // want:java.weakrand.security-use want:java.cookie.insecure
  }`)},
		{"java SecureRandom into a cookie", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) {
    String v = Long.toString(new java.security.SecureRandom().nextLong());
    Cookie c = new Cookie("session", v);
    c.setSecure(true);
    c.setHttpOnly(true);
    resp.addCookie(c);
  }`)},
		{"javascript Math.random into a cookie", js(`
app.get("/login", (req, res) => {
  const token = Math.random().toString(36).slice(2);
  res.cookie("session", token, { httpOnly: true, secure: true }); // want:js.weakrand.security-use
});
`)},
		{"javascript crypto random into a cookie", js(`
const crypto = require("crypto");
app.get("/login", (req, res) => {
  const token = crypto.randomBytes(16).toString("hex");
  res.cookie("session", token, { httpOnly: true, secure: true });
});
`)},
		{"go math/rand into a cookie", goCookie("math/rand", "v := strconv.Itoa(rand.Int())", "v", " // want:go.weakrand.token")},
		{"go crypto/rand into a cookie", goCookie("crypto/rand", "b := make([]byte, 16)\n\trand.Read(b)", "hex.EncodeToString(b)", "")},
		{"php rand into a cookie", php(`
$t = (string) rand();
setcookie("session", $t, ["secure" => true, "httponly" => true]); // want:php.weakrand.security-use
`)},
		{"php random_bytes into a cookie", php(`
$t = bin2hex(random_bytes(16));
setcookie("session", $t, ["secure" => true, "httponly" => true]);
`)},
		{"weak randomness is not request data", py(`
import random
def h():
    os.system("sleep " + str(random.random()))
`)},
	})
}
