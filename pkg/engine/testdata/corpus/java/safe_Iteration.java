// safe: java.xss.writer
package com.example.export;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.apache.commons.codec.binary.Base64;
import org.owasp.esapi.ESAPI;

public class Exporter {
    public void export(HttpServletRequest request, HttpServletResponse response) throws Exception {
        Set<String> names = new HashSet<>();
        names.add(request.getHeader("X-Name"));
        Iterator<String> it = names.iterator();
        String first = it.next();
        response.getWriter().println(ESAPI.encoder().encodeForHTML(first));

        Map<String, String> labels = new HashMap<>();
        labels.put("k", new String(Base64.decodeBase64(request.getParameter("b64"))));
        for (Map.Entry<String, String> e : labels.entrySet()) {
            response.getWriter().println(ESAPI.encoder().encodeForHTMLAttribute(e.getValue()));
        }
        response.getWriter().println(labels.size());
    }
}
