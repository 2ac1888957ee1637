package com.example.web;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import javax.naming.directory.DirContext;
import javax.naming.directory.SearchControls;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import com.mongodb.BasicDBObject;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;

public class InjectionController {
    private Connection conn;
    private DirContext ctx;

    private ResultSet findUser(String name) throws Exception {
        Statement st = conn.createStatement();
        String sql = "SELECT * FROM users WHERE name = '" + name + "'";
        return st.executeQuery(sql); // vuln: java.sqli.string-query
    }

    @GetMapping("/users")
    public String users(@RequestParam String name) throws Exception {
        return findUser(name).toString();
    }

    public void ping(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String host = request.getParameter("host");
        Runtime.getRuntime().exec("ping -c 1 " + host); // vuln: java.cmdi.exec
    }

    public Object ldap(HttpServletRequest request) throws Exception {
        String user = request.getParameter("user");
        String filter = "(uid=" + user + ")";
        return ctx.search("dc=example,dc=com", filter, new SearchControls()); // vuln: java.ldapi.filter
    }

    @GetMapping("/calc")
    public Object calc(@RequestParam("expr") String expr) {
        SpelExpressionParser parser = new SpelExpressionParser();
        return parser.parseExpression(expr).getValue(); // vuln: java.ssti.expression
    }

    public Object mongo(HttpServletRequest request) {
        String name = request.getParameter("name");
        return new BasicDBObject("$where", "this.name == '" + name + "'"); // vuln: java.nosqli.where
    }
}
