resource "aws_s3_bucket_acl" "site" {
  bucket = aws_s3_bucket.site.id
  acl    = "public-read" # vuln: terraform.public-bucket
}

resource "aws_security_group" "ssh" {
  name = "ssh"
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"] # vuln: terraform.open-security-group
  }
}

resource "aws_db_instance" "main" {
  engine              = "postgres"
  publicly_accessible = true # vuln: terraform.public-database
  storage_encrypted   = false # vuln: terraform.unencrypted-storage
}

resource "aws_s3_bucket_public_access_block" "site" {
  bucket                  = aws_s3_bucket.site.id
  block_public_acls       = false # vuln: terraform.public-access-block-disabled
}
