// safe: java.xpathi.expression
package com.example.catalog;

import javax.servlet.http.HttpServletRequest;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathExpression;
import javax.xml.xpath.XPathFactory;

public class Lookup {
    public XPathExpression byAuthor(HttpServletRequest request) throws Exception {
        XPath xp = XPathFactory.newInstance().newXPath();
        String author = request.getParameter("author");
        String which = author == null ? "first" : "last";
        return xp.compile("//book[" + which + "()]");
    }
}
