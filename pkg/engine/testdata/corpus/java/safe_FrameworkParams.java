// safe: java.path.file-access java.ldapi.filter java.cmdi.exec
package com.example.api;

import java.io.File;
import javax.naming.directory.DirContext;
import javax.ws.rs.FormParam;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import org.owasp.esapi.ESAPI;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

@RestController
@Path("/files")
public class FrameworkParams {
    private DirContext dir;

    @PostMapping("/notes/{id}")
    public void save(@PathVariable("id") String id, @RequestBody String text, @RequestHeader("X-Group") String group) throws Exception {
        new File("/data/notes/" + Integer.parseInt(id) + ".txt").createNewFile();
        dir.search("ou=" + ESAPI.encoder().encodeForDN(group), "(objectClass=person)", null);
    }

    @POST
    @Path("/{folder}")
    public void upload(@PathParam("folder") String folder, @FormParam("cmd") String cmd) throws Exception {
        new ProcessBuilder("/usr/bin/archive", cmd, folder).start();
    }
}
