<?php
// safe: php.cmdi.shell
// Only the fixed elements of the lists reach the shell.
$parts = [$_GET['image'], 'convert', 'thumb.png'];
shell_exec($parts[1] . ' --version');

[$input, $tool] = [$_GET['image'], 'identify'];
passthru($tool . ' -list format');

$queue = [];
$queue[] = 'uptime';
$queue[] = $_GET['extra'];
exec($queue[0]);
