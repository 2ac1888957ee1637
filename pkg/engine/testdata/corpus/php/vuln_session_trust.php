<?php
// Values from the request are put in the session, which later code trusts.
session_start();
$_SESSION['role'] = $_POST['role']; // vuln: php.trustbound.session
$_SESSION['prefs']['theme'] = $_GET['theme']; // vuln: php.trustbound.session
