// safe: java.path.file-access
package com.example.web;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.commons.io.FilenameUtils;
import org.springframework.web.bind.annotation.CookieValue;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class ThemeController {
    @GetMapping("/theme.css")
    public byte[] theme(@CookieValue("theme") String theme) throws Exception {
        Path css = Paths.get("/srv/themes", FilenameUtils.getName(theme) + ".css");
        return Files.readAllBytes(css);
    }
}
