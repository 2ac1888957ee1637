<?php
// Plugin hooks evaluated from request data.
$check = $_POST['check'];
assert($check); // vuln: php.code.eval
$filter = create_function('$v', 'return ' . $_POST['filter'] . ';'); // vuln: php.code.eval
