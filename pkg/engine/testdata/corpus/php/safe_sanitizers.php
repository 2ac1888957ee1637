<?php
// safe: php.xss.echo php.cmdi.shell php.path.file-access php.sqli.string-query php.redirect.open
// Request data passed through the escaping and conversion functions of the
// standard library.
$db = mysqli_connect('localhost', 'app', getenv('DB_PASS'), 'app');
echo '<p>' . htmlentities($_GET['msg']) . '</p>';
printf('<p>%d items</p>', intval($_GET['n']));
echo '<a href="/search?q=' . urlencode($_GET['q']) . '">again</a>';
system('grep -r ' . escapeshellarg($_GET['pattern']) . ' /srv/logs');
exec(escapeshellcmd('ping -c 1 ' . $_GET['host']));
readfile('/srv/public/' . basename($_GET['file']));
mysqli_query($db, "SELECT * FROM t WHERE id = " . (int) $_GET['id']);
mysqli_query($db, "SELECT * FROM t WHERE price > " . floatval($_GET['min']));
mysqli_query($db, "SELECT * FROM t WHERE name = '" . mysqli_real_escape_string($db, $_GET['name']) . "'");
mysqli_query($db, "SELECT * FROM t WHERE id = " . filter_var($_GET['ref'], FILTER_VALIDATE_INT));
header('Location: /profile?tab=' . rawurlencode($_GET['tab']));
echo strlen($_GET['msg']) . ' characters';
