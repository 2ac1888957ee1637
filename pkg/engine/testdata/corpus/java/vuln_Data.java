package com.example.web;

import java.io.ObjectInputStream;
import javax.servlet.http.HttpServletRequest;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;

public class DataController {
    public Object session(HttpServletRequest request) throws Exception {
        ObjectInputStream in = new ObjectInputStream(request.getInputStream()); // vuln: java.deser.object-stream
        return in.readObject();
    }

    public Document parse(java.io.InputStream body) throws Exception {
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance(); // vuln: java.xxe.document-builder
        DocumentBuilder db = dbf.newDocumentBuilder();
        return db.parse(body);
    }
}
