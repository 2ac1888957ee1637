// safe: java.ldapi.filter
package com.example.directory;

import java.util.Hashtable;
import javax.naming.NamingEnumeration;
import javax.naming.directory.InitialDirContext;
import javax.naming.directory.SearchControls;
import javax.naming.directory.SearchResult;
import javax.servlet.http.HttpServletRequest;
import org.owasp.esapi.ESAPI;

public class PeopleFinder {
    public NamingEnumeration<SearchResult> find(HttpServletRequest request) throws Exception {
        InitialDirContext people = new InitialDirContext(new Hashtable<String, String>());
        String mail = ESAPI.encoder().encodeForLDAP(request.getParameter("mail"));
        return people.search("ou=people,dc=example,dc=org", "(mail=" + mail + ")", new SearchControls());
    }
}
