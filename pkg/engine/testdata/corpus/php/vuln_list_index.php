<?php
// The command is assembled from a list whose second element comes from the
// request.
$parts = ['convert', $_GET['image'], 'thumb.png'];
$line = $parts[0] . ' ' . $parts[1] . ' ' . $parts[2];
shell_exec($line); // vuln: php.cmdi.shell

[$tool, $input] = ['identify', $_GET['image']];
passthru($tool . ' ' . $input); // vuln: php.cmdi.shell
