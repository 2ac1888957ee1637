<?php
// safe: php.cmdi.shell
// The fixed format selects the branch that quotes the argument; the raw
// branch cannot run.
$format = 'zip';
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
exec($cmd);
