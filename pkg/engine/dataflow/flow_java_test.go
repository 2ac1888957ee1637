package dataflow_test

import (
	"fmt"
	"testing"
)

// java wraps method bodies in a servlet whose request parameter is the
// source, with the usual imports.
func java(members string) []src {
	return one("app/H.java", fmt.Sprintf(`package app;
import java.io.*;
import java.sql.*;
import java.util.*;
import javax.servlet.http.*;
public class H extends HttpServlet {
%s
}
`, members))
}

func TestFlowJava(t *testing.T) {
	t.Parallel()
	runFlowCases(t, []flowCase{
		{"request parameter to Runtime.exec", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String c = req.getParameter("c");
    Runtime.getRuntime().exec(c); // want:java.cmdi.exec
  }`)},
		{"constant command", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    req.getParameter("c");
    Runtime.getRuntime().exec("ls");
  }`)},
		{"string concatenation into a statement", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    Connection conn = DriverManager.getConnection("jdbc:x");
    Statement st = conn.createStatement();
    String q = "select * from t where id = '" + req.getParameter("id") + "'";
    st.executeQuery(q); // want:java.sqli.string-query
  }`)},
		{"prepared statement with a bound parameter", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    Connection conn = DriverManager.getConnection("jdbc:x");
    PreparedStatement ps = conn.prepareStatement("select * from t where id = ?");
    ps.setString(1, req.getParameter("id"));
    ps.executeQuery();
  }`)},
		{"StringBuilder carries taint", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    StringBuilder sb = new StringBuilder("select * from t where id = ");
    sb.append(req.getParameter("id"));
    Statement st = DriverManager.getConnection("jdbc:x").createStatement();
    st.execute(sb.toString()); // want:java.sqli.string-query
  }`)},
		{"integer parse sanitizes", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    int id = Integer.parseInt(req.getParameter("id"));
    Statement st = DriverManager.getConnection("jdbc:x").createStatement();
    st.execute("select * from t where id = " + id);
  }`)},
		{"list get by index", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    List<String> xs = new ArrayList<>();
    xs.add("safe");
    xs.add(req.getParameter("c"));
    Runtime.getRuntime().exec(xs.get(1)); // want:java.cmdi.exec
    Runtime.getRuntime().exec(xs.get(0));
  }`)},
		{"list remove shifts elements", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    List<String> xs = new ArrayList<>();
    xs.add(req.getParameter("c"));
    xs.add("safe");
    xs.remove(0);
    Runtime.getRuntime().exec(xs.get(0));
  }`)},
		{"map by constant key", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Map<String, String> m = new HashMap<>();
    m.put("a", req.getParameter("c"));
    m.put("b", "ls");
    Runtime.getRuntime().exec(m.get("a")); // want:java.cmdi.exec
    Runtime.getRuntime().exec(m.get("b"));
  }`)},
		{"field set in constructor read by getter", one("app/H.java", `package app;
import javax.servlet.http.*;
class Holder {
  private String v;
  Holder(String v) { this.v = v; }
  String get() { return v; }
}
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Holder h = new Holder(req.getParameter("c"));
    Runtime.getRuntime().exec(h.get()); // want:java.cmdi.exec
  }
}
`)},
		{"helper across files", []src{
			{"app/Exec.java", `package app;
public class Exec {
  public static void run(String c) throws java.io.IOException {
    Runtime.getRuntime().exec(c); // want:java.cmdi.exec
  }
}
`},
			{"app/H.java", `package app;
import javax.servlet.http.*;
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    Exec.run(req.getParameter("c"));
    Exec.run("ls");
  }
}
`}}},
		{"interface call reaches the implementation", one("app/H.java", `package app;
import javax.servlet.http.*;
interface Runner { void run(String c) throws java.io.IOException; }
class ShellRunner implements Runner {
  public void run(String c) throws java.io.IOException { Runtime.getRuntime().exec(c); } // want:java.cmdi.exec
}
public class H extends HttpServlet {
  private Runner r = new ShellRunner();
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws java.io.IOException {
    r.run(req.getParameter("c"));
  }
}
`)},
		{"switch on a constant is pruned", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String c = "ls";
    int mode = 2;
    switch (mode) {
      case 1: c = req.getParameter("c"); break;
      default: break;
    }
    Runtime.getRuntime().exec(c);
  }`)},
		{"ternary with a constant condition", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    int n = 86;
    String c = (7 * 42) - n > 200 ? "ls" : req.getParameter("c");
    Runtime.getRuntime().exec(c);
  }`)},
		{"ternary with an unknown condition", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String c = req.getHeader("x") != null ? "ls" : req.getParameter("c");
    Runtime.getRuntime().exec(c); // want:java.cmdi.exec
  }`)},
		{"xss through the response writer", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    PrintWriter w = resp.getWriter();
    w.println("<p>" + req.getParameter("name")); // want:java.xss.writer
  }`)},
		{"xss encoded", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    PrintWriter w = resp.getWriter();
    w.println("<p>" + org.owasp.encoder.Encode.forHtml(req.getParameter("name")));
  }`)},
		{"taint into a catch block", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String c = "ls";
    try {
      c = req.getParameter("c");
      Integer.parseInt(c);
    } catch (NumberFormatException e) {
      Runtime.getRuntime().exec(c); // want:java.cmdi.exec
    }
  }`)},
		{"weak hash constant", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    java.security.MessageDigest.getInstance("MD5"); // want:java.crypto.weak-hash
    java.security.MessageDigest.getInstance("SHA-256");
  }`)},
		{"weak hash through a local constant", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    String alg = "SHA";
    alg = alg + "1";
    java.security.MessageDigest.getInstance(alg); // want:java.crypto.weak-hash
  }`)},
		{"weak hash named by a helper's constant result", java(`
  static String alg() { return "MD5"; }
  static String strong() { return "SHA-256"; }
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    java.security.MessageDigest.getInstance(alg()); // want:java.crypto.weak-hash
    java.security.MessageDigest.getInstance(strong());
  }`)},
		{"virtual call on a receiver of either subclass", []src{
			{"app/Base.java", "package app;\npublic abstract class Base {\n  public abstract void run(String c) throws Exception;\n}\n"},
			{"app/Echo.java", "package app;\npublic class Echo extends Base {\n  public void run(String c) throws Exception {\n    Runtime.getRuntime().exec(\"echo\");\n  }\n}\n"},
			{"app/Shell.java", "package app;\npublic class Shell extends Base {\n  public void run(String c) throws Exception {\n    Runtime.getRuntime().exec(c); // want:java.cmdi.exec\n  }\n}\n"},
			{"app/H.java", `package app;
import javax.servlet.http.*;
public class H extends HttpServlet {
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws Exception {
    String x = req.getParameter("c");
    Base b = x.isEmpty() ? new Echo() : new Shell();
    b.run(x);
  }
}
`},
		}},
		{"lambda captures taint", java(`
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String c = req.getParameter("c");
    Runnable r = () -> {
      try { Runtime.getRuntime().exec(c); } catch (IOException e) {} // want:java.cmdi.exec
    };
    r.run();
  }`)},
	})
}
