package com.example.tools;

import java.util.function.Function;
import javax.servlet.http.HttpServletRequest;

public class Converter {
    public Process convert(HttpServletRequest request) throws Exception {
        String format = request.getParameter("format");
        Function<String, String> build = name -> "convert input.png " + name + "." + format;
        return Runtime.getRuntime().exec(build.apply("output")); // vuln: java.cmdi.exec
    }
}
