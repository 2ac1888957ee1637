<?php
// Order lookups shared by the pages.

function find_order($conn, $reference)
{
    $sql = "SELECT * FROM orders WHERE reference = '" . $reference . "'";
    return mysqli_query($conn, $sql); // vuln: php.sqli.string-query
}
