<?php
// The maintenance switch is on, so the listing command runs with the raw
// directory name.
define('MAINTENANCE_LISTING', true);

$dir = $_GET['dir'];
if (MAINTENANCE_LISTING) {
    system("ls -la /srv/exports/" . $dir); // vuln: php.cmdi.shell
}
