// safe: java.sqli.string-query java.cmdi.exec java.ldapi.filter java.ssti.expression java.nosqli.where
package com.example.web;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import javax.naming.directory.DirContext;
import javax.naming.directory.SearchControls;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import com.mongodb.client.model.Filters;
import org.springframework.ldap.support.LdapEncoder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;

public class InjectionController {
    private Connection conn;
    private DirContext ctx;

    private ResultSet findUser(String name) throws Exception {
        PreparedStatement ps = conn.prepareStatement("SELECT * FROM users WHERE name = ?");
        ps.setString(1, name);
        return ps.executeQuery();
    }

    @GetMapping("/users")
    public String users(@RequestParam String name) throws Exception {
        return findUser(name).toString();
    }

    public void ping(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String host = request.getParameter("host");
        new ProcessBuilder("ping", "-c", "1", host).start();
    }

    public Object ldap(HttpServletRequest request) throws Exception {
        String user = LdapEncoder.filterEncode(request.getParameter("user"));
        return ctx.search("dc=example,dc=com", "(uid=" + user + ")", new SearchControls());
    }

    @GetMapping("/calc")
    public Object calc(@RequestParam("a") String a, @RequestParam("b") String b) {
        return Integer.parseInt(a) + Integer.parseInt(b);
    }

    public Object mongo(HttpServletRequest request) {
        return Filters.eq("name", request.getParameter("name"));
    }
}
