<?php
// safe: php.sqli.string-query
// Order lookups shared by the pages.

function find_order($conn, $id)
{
    $sql = "SELECT * FROM orders WHERE id = " . $id;
    return mysqli_query($conn, $sql);
}
