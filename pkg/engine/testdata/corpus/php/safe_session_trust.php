<?php
// safe: php.trustbound.session
// The session only holds values the server decided.
session_start();
$allowed = ['light', 'dark'];
$_SESSION['role'] = 'viewer';
$theme = in_array($_GET['theme'] ?? '', $allowed, true) ? $_GET['theme'] : 'light';
$_SESSION['prefs']['theme'] = $theme === 'dark' ? 'dark' : 'light';
