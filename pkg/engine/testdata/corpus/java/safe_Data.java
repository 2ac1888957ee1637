// safe: java.deser.object-stream java.xxe.document-builder
package com.example.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import javax.servlet.http.HttpServletRequest;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;

public class DataController {
    private final ObjectMapper mapper = new ObjectMapper();

    public Object session(HttpServletRequest request) throws Exception {
        return mapper.readValue(request.getInputStream(), SessionState.class);
    }

    public Document parse(java.io.InputStream body) throws Exception {
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        DocumentBuilder db = dbf.newDocumentBuilder();
        return db.parse(body);
    }

    static class SessionState {
        public String user;
    }
}
