package com.example.search;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import javax.servlet.http.HttpServletRequest;

public class TagSearch {
    private Connection db;

    public void find(HttpServletRequest request) throws Exception {
        List<String> terms = new ArrayList<>();
        terms.add("news");
        terms.add(request.getParameter("tag"));
        terms.add("sports");
        terms.remove(0);
        String tag = terms.get(0);
        db.createStatement().execute("DELETE FROM tags WHERE name = '" + tag + "'"); // vuln: java.sqli.string-query
    }
}
