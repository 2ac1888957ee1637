<?php
// A small service class: the public method formats the path, a private
// static helper opens it.
class AttachmentService
{
    public function open($name)
    {
        $path = $this->directory() . '/' . $name;
        return self::load($path);
    }

    private function directory()
    {
        return '/var/app/attachments';
    }

    private static function load($path)
    {
        return file_get_contents($path); // vuln: php.path.file-access
    }
}

$service = new AttachmentService();
$content = $service->open($_POST['attachment']);
