package com.example.catalog;

import javax.servlet.http.HttpServletRequest;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathFactory;
import org.w3c.dom.Document;

public class Catalog {
    private Document books;

    class Query {
        private final String title;

        Query(String title) {
            this.title = title;
        }

        String expression() {
            return "/books/book[title='" + title + "']/price";
        }
    }

    public String price(HttpServletRequest request) throws Exception {
        Query q = new Query(request.getParameter("title"));
        XPath xp = XPathFactory.newInstance().newXPath();
        return xp.evaluate(q.expression(), books); // vuln: java.xpathi.expression
    }
}
