package com.example.api;

import java.io.File;
import javax.naming.directory.DirContext;
import javax.ws.rs.FormParam;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

@RestController
@Path("/files")
public class FrameworkParams {
    private DirContext dir;

    @PostMapping("/notes/{name}")
    public void save(@PathVariable("name") String name, @RequestBody String text, @RequestHeader("X-Group") String group) throws Exception {
        new File("/data/notes/" + name).createNewFile(); // vuln: java.path.file-access
        dir.search("ou=" + group, "(objectClass=person)", null); // vuln: java.ldapi.filter
    }

    @POST
    @Path("/{folder}")
    public void upload(@PathParam("folder") String folder, @FormParam("cmd") String cmd) throws Exception {
        new ProcessBuilder(cmd, folder).start(); // vuln: java.cmdi.exec
    }
}
