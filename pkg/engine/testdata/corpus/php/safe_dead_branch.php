<?php
// safe: php.cmdi.shell
// The listing code is switched off by constants, so it never runs.
define('MAINTENANCE_LISTING', false);
$verbose = false;

$dir = $_GET['dir'];
if (MAINTENANCE_LISTING) {
    system("ls -la /srv/exports/" . $dir);
}
if ($verbose && false) {
    passthru("du -sh " . $dir);
}
echo "<p>Listing disabled</p>";
