<?php
// The export format is fixed in code; the branch it selects builds the
// archive command from the request.
$format = 'tar';
$target = $_POST['target'];

switch ($format) {
    case 'zip':
        $cmd = "zip -r out.zip " . escapeshellarg($target);
        break;
    case 'tar':
        $cmd = "tar czf out.tgz " . $target;
        break;
    default:
        $cmd = "true";
}
exec($cmd); // vuln: php.cmdi.shell
